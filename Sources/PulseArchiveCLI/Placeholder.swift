public enum PulseArchiveCommand { public static func main() {} }

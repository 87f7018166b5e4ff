import Foundation

/// The repository's root, for the age test vectors (this target links the age module alone,
/// not the shared test support).
enum Repository {
    static let root: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.path
    }()
}

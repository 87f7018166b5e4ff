import PulseArchiveCLI
PulseArchiveCommand.main()

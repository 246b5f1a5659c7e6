from accelwiz.cli import main

main()

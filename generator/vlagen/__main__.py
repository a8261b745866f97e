from vlagen.cli import main

main()

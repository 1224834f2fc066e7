"""`python -m benchwarmers`: the `benchwarmers` command."""

from benchwarmers.cli.app import main

if __name__ == "__main__":
    main()

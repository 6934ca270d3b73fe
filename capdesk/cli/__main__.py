import sys

from capdesk.cli.main import main

sys.exit(main())

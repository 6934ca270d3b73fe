import sys

from capdesk.cli import main

sys.exit(main())

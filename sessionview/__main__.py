from sessionview.cli import main

raise SystemExit(main())

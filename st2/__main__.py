from st2.entry import main

raise SystemExit(main())

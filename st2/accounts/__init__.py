"""Model accounts: declared per catalog, judged per account, moved between, admitted per account."""

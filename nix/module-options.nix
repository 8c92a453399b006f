# The options both modules (NixOS and home-manager) offer under services.st2.
{ lib, defaultPackage }:
{
  enable = lib.mkEnableOption "the st2 supervisor (st2.service) and the usage poll timer as systemd user units";

  package = lib.mkOption {
    type = lib.types.package;
    default = defaultPackage;
    defaultText = "st2's flake package for this system";
    description = "The st2 package whose bin/st2 the units run.";
  };

  catalog = lib.mkOption {
    type = lib.types.nullOr lib.types.str;
    default = null;
    example = "/home/me/.local/state/st2/default/catalog";
    description = "Catalog root (absolute, no spaces); null keeps st2's default ($CATALOG, then the XDG state default).";
  };

  host = lib.mkOption {
    type = lib.types.nullOr lib.types.str;
    default = null;
    description = "Host name the supervisor acts as; null keeps st2's default, the short hostname.";
  };

  memoryMax = lib.mkOption {
    type = lib.types.str;
    default = "512M";
    description = "MemoryMax= of st2.service. It bounds the supervisor alone: agents run in their own scopes.";
  };

  pollInterval = lib.mkOption {
    type = lib.types.str;
    default = "*:0/5";
    description = "OnCalendar= expression of st2-usage-poll.timer (default every 5 minutes).";
  };

  usagePoll = lib.mkOption {
    type = lib.types.bool;
    default = true;
    description = "Install and enable the usage poll timer (st2-usage-poll.timer and its service).";
  };

  web = lib.mkOption {
    type = lib.types.bool;
    default = false;
    description = "Install and enable st2-web.service: `st2 web` on loopback (reach it through a tunnel).";
  };
}

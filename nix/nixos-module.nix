# NixOS: services.st2 installs the st2 user units for every user (systemd.user.units) and
# enables the supervisor and the usage poll timer in each user's manager.
{ self }:
{ config, lib, pkgs, ... }:
let
  cfg = config.services.st2;
  installed = import ./module-units.nix cfg;
in
{
  options.services.st2 = import ./module-options.nix {
    inherit lib;
    defaultPackage = self.packages.${pkgs.stdenv.hostPlatform.system}.st2;
  };

  config = lib.mkIf cfg.enable {
    systemd.user.units = builtins.mapAttrs (
      name: text:
      {
        inherit text;
      }
      // (if installed.wantedBy ? ${name} then { wantedBy = [ installed.wantedBy.${name} ]; } else { })
    ) installed.units;
  };
}

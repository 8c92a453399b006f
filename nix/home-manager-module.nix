# home-manager: services.st2 writes the st2 user units into ~/.config/systemd/user and links
# the supervisor and the usage poll timer into their targets' .wants directories.
{ self }:
{ config, lib, pkgs, ... }:
let
  cfg = config.services.st2;
  installed = import ./module-units.nix cfg;
  unitFiles = builtins.listToAttrs (
    map (name: {
      name = "systemd/user/${name}";
      value.text = installed.units.${name};
    }) (builtins.attrNames installed.units)
  );
  wantsLinks = builtins.listToAttrs (
    map (name: {
      name = "systemd/user/${installed.wantedBy.${name}}.wants/${name}";
      value.text = installed.units.${name};
    }) (builtins.attrNames installed.wantedBy)
  );
in
{
  options.services.st2 = import ./module-options.nix {
    inherit lib;
    defaultPackage = self.packages.${pkgs.stdenv.hostPlatform.system}.st2;
  };

  config = lib.mkIf cfg.enable {
    xdg.configFile = unitFiles // wantsLinks;
  };
}

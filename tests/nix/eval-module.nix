# A minimal interpreter for st2's two modules under the stand-in nixpkgs, so their wiring is
# evaluated offline: the module is called with `config` built from its own option defaults
# overlaid by `settings` (each checked against its option's type, an unknown one refused),
# and its `config` is returned with lib.mkIf resolved. The real module system (merging,
# priorities, submodule types) is not reproduced; this proves what the module itself computes.
{
  module,
  settings,
  system ? "x86_64-linux",
}:
let
  lib = import ./stub-nixpkgs/lib.nix;
  pkgs = import ./stub-nixpkgs/packages.nix { inherit lib system; };

  evaluated = module {
    inherit lib pkgs config;
  };
  declared = evaluated.options.services.st2;

  unknown = builtins.filter (name: !(declared ? ${name})) (builtins.attrNames settings);
  wrongType = builtins.filter (name: !(declared.${name}.type.check settings.${name})) (
    builtins.attrNames (builtins.removeAttrs settings unknown)
  );

  config.services.st2 =
    if unknown != [ ] then
      throw "eval-module: unknown option(s) services.st2.${builtins.toJSON unknown}"
    else if wrongType != [ ] then
      throw "eval-module: option(s) ${builtins.toJSON wrongType} given a value of the wrong type"
    else
      builtins.mapAttrs (name: option: option.default) declared // settings;

  resolve =
    value:
    if (value._type or null) == "if" then (if value.condition then value.content else { }) else value;
in
resolve evaluated.config

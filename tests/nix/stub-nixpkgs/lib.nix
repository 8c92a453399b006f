# The part of nixpkgs' lib that st2's flake and modules use. The module-system functions build
# plain data that tests/nix/eval-module.nix interprets (the real module system is not here).
let
  strict = import ./strict.nix;
  type = name: check: {
    _type = "option-type";
    inherit name check;
  };
  types = {
    str = type "str" builtins.isString;
    bool = type "bool" builtins.isBool;
    package = type "package" strict.isDerivation;
    nullOr = inner: type "null or ${inner.name}" (value: value == null || inner.check value);
  };
in
{
  inherit types;

  mkOption =
    given:
    let
      checked = strict.arguments "lib.mkOption" [
        "type"
        "default"
        "defaultText"
        "example"
        "description"
      ] [ "type" "description" ] given;
    in
    if (checked.type._type or null) != "option-type" then
      throw "stand-in nixpkgs: lib.mkOption: type must be one of lib.types"
    else
      checked // { _type = "option"; };

  mkEnableOption = name: {
    _type = "option";
    type = types.bool;
    default = false;
    description = "Whether to enable ${name}.";
  };

  mkIf = condition: content:
    if builtins.isBool condition then
      {
        _type = "if";
        inherit condition content;
      }
    else
      throw "stand-in nixpkgs: lib.mkIf: the condition must be a boolean";

  optionalAttrs = condition: attributes: if condition then attributes else { };

  makeBinPath =
    packages:
    builtins.concatStringsSep ":" (
      map (package: "${package}/bin") (strict.derivations "lib.makeBinPath" "its argument" packages)
    );

  platforms.linux = [
    "x86_64-linux"
    "aarch64-linux"
  ];
}

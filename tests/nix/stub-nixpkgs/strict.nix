# Argument checking shared by the stand-in's functions.
rec {
  # Throw unless every name in `arguments` is in `allowed` and every name in `required` is given.
  arguments =
    function: allowed: required: given:
    let
      names = builtins.attrNames given;
      unknown = builtins.filter (name: !(builtins.elem name allowed)) names;
      missing = builtins.filter (name: !(given ? ${name})) required;
    in
    if unknown != [ ] then
      throw "stand-in nixpkgs: ${function} got unknown argument(s) ${builtins.toJSON unknown}"
    else if missing != [ ] then
      throw "stand-in nixpkgs: ${function} is missing argument(s) ${builtins.toJSON missing}"
    else
      given;

  isDerivation = value: builtins.isAttrs value && (value.type or null) == "derivation";

  derivations =
    function: what: values:
    if builtins.isList values && builtins.all isDerivation values then
      values
    else
      throw "stand-in nixpkgs: ${function}: ${what} must be a list of derivations";

  strings =
    function: what: values:
    if builtins.isList values && builtins.all builtins.isString values then
      values
    else
      throw "stand-in nixpkgs: ${function}: ${what} must be a list of strings";
}

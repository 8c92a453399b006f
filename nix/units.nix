# Render the systemd user units in units/ exactly as `st2 service install` does
# (st2/service/units.py): the same at-sign-delimited placeholders, the same full-match value
# checks (the patterns below are spelled identically there), and an unknown placeholder is an
# evaluation error rather than text left in a unit. Values are refused, never quoted.
#
# Returns { "<unit name>" = "<rendered text>"; } for every *.service and *.timer template.
# Builtins only, so it evaluates with any nixpkgs (or none).
{
  st2,
  catalog ? null,
  host ? null,
  memoryMax ? "512M",
  pollInterval ? "*:0/5",
  templates ? ../units,
}:
let
  pathPattern = "/[A-Za-z0-9._+=/-]+";
  hostPattern = "[A-Za-z0-9][A-Za-z0-9._-]*";
  memoryPattern = "[0-9]+[KMGT]?|[0-9]+%|infinity";
  calendarPattern = "[A-Za-z0-9*:/,.~ -]+";

  checked =
    what: pattern: value:
    if builtins.isString value && builtins.match pattern value != null then
      value
    else
      throw "st2 units: ${what} ${builtins.toJSON value} must match ${pattern} (no spaces, quotes, % or $)";

  substitutions = {
    st2 = checked "st2 executable" pathPattern st2;
    locationArguments =
      (if catalog == null then "" else " --catalog ${checked "catalog" pathPattern catalog}")
      + (if host == null then "" else " --host ${checked "host" hostPattern host}");
    memoryMax = checked "memory maximum" memoryPattern memoryMax;
    pollInterval = checked "poll interval" calendarPattern pollInterval;
  };

  entries = builtins.readDir templates;
  names = builtins.filter (
    name: entries.${name} != "directory" && builtins.match ".*\\.(service|timer)" name != null
  ) (builtins.attrNames entries);

  render =
    name:
    builtins.concatStringsSep "" (
      map (
        piece:
        if builtins.isList piece then
          let
            key = builtins.head piece;
          in
          substitutions.${key} or (throw "st2 units: ${name}: unknown placeholder @${key}@")
        else
          piece
      ) (builtins.split "@([A-Za-z0-9]+)@" (builtins.readFile (templates + "/${name}")))
    );
in
builtins.listToAttrs (
  map (name: {
    inherit name;
    value = render name;
  }) names
)

# The Python dependencies, read from pyproject.toml (the one list) and looked up by name in a
# nixpkgs Python package set: "inotify_simple>=1.3" -> pythonPackages."inotify-simple". A name
# the package set lacks is an evaluation error, never a silently missing dependency.
{ src, pythonPackages }:
let
  project = (builtins.fromTOML (builtins.readFile (src + "/pyproject.toml"))).project;
  attributeName =
    requirement:
    builtins.replaceStrings [ "_" ] [ "-" ] (
      builtins.head (builtins.match "([A-Za-z0-9_.-]+).*" requirement)
    );
  lookup =
    requirement:
    let
      name = attributeName requirement;
    in
    pythonPackages.${name} or (throw "st2: pyproject.toml requires ${requirement}, but the Python package set has no ${name}");
in
{
  inherit project;
  runtime = map lookup project.dependencies;
  test = map lookup project.optional-dependencies.test;
}

# The packages and builders st2's flake uses, for one system.
{ lib, system }:
let
  strict = import ./strict.nix;

  # A derivation that evaluates (it has a name, a system, an output path) but refuses to build.
  standIn =
    name: attributes:
    derivation (
      {
        inherit name system;
        builder = "/bin/sh";
        args = [
          "-c"
          "echo 'stand-in nixpkgs cannot build ${name}' >&2; exit 1"
        ];
      }
      // attributes
    );

  tool = name: standIn name { };

  pythonPackage =
    name:
    standIn "python3.12-${name}" { } // {
      pname = name;
      pythonModule = true;
    };

  isPythonPackage = value: strict.isDerivation value && (value.pythonModule or false);
  pythonPackages =
    function: what: values:
    if builtins.isList values && builtins.all isPythonPackage values then
      values
    else
      throw "stand-in nixpkgs: ${function}: ${what} must be a list of Python packages";

  python3Packages =
    builtins.listToAttrs (
      map (name: {
        inherit name;
        value = pythonPackage name;
      }) [
        # pyproject.toml's dependencies and test extras, under their nixpkgs attribute names.
        "click"
        "psutil"
        "pydantic"
        "sdnotify"
        "inotify-simple"
        "ckdl"
        "textual"
        "starlette"
        "uvicorn"
        "prometheus-client"
        "qrcode"
        "pywebpush"
        "py-vapid"
        "http-ece"
        "apprise"
        "cryptography"
        "pytest"
        "pytest-xdist"
        "pytest-timeout"
        "hypothesis"
        "pytest-textual-snapshot"
        "playwright"
        "setuptools"
      ]
    )
    // {
      buildPythonApplication =
        given:
        let
          checked = strict.arguments "python3Packages.buildPythonApplication" [
            "pname"
            "version"
            "pyproject"
            "src"
            "build-system"
            "dependencies"
            "makeWrapperArgs"
            "postInstall"
            "doCheck"
            "pythonImportsCheck"
            "meta"
          ] [ "pname" "version" "pyproject" "src" "build-system" "dependencies" ] given;
          meta = strict.arguments "buildPythonApplication meta" [
            "description"
            "mainProgram"
            "platforms"
          ] [ "mainProgram" ] (checked.meta or { });
        in
        assert checked.pyproject == true;
        standIn "${checked.pname}-${checked.version}" {
          inherit (checked) src;
          postInstall = checked.postInstall or "";
          buildSystem = pythonPackages "buildPythonApplication" "build-system" checked.build-system;
          dependencies = pythonPackages "buildPythonApplication" "dependencies" checked.dependencies;
          makeWrapperArgs = strict.strings "buildPythonApplication" "makeWrapperArgs" (checked.makeWrapperArgs or [ ]);
        }
        // {
          inherit meta;
          inherit (checked) pname version;
        };
    };

  python3 = tool "python3-3.12" // {
    withPackages =
      select:
      standIn "python3-3.12-env" {
        packages = pythonPackages "python3.withPackages" "the selected packages" (select python3Packages);
      };
  };
in
{
  inherit lib python3 python3Packages;

  stdenv.hostPlatform.system = system;

  tmux = tool "tmux";
  git = tool "git";
  systemd = tool "systemd";
  nodejs = tool "nodejs";

  runCommand =
    name: environment: script:
    if !(builtins.isString name && builtins.isString script) then
      throw "stand-in nixpkgs: runCommand takes a name, an environment and a script"
    else
      standIn name (
        (strict.arguments "runCommand ${name}" [ "nativeBuildInputs" ] [ ] environment)
        // {
          nativeBuildInputs = strict.derivations "runCommand ${name}" "nativeBuildInputs" (environment.nativeBuildInputs or [ ]);
          buildCommand = script;
        }
      );

  mkShell =
    given:
    let
      checked = strict.arguments "mkShell" [ "packages" "shellHook" ] [ "packages" ] given;
    in
    standIn "nix-shell" {
      packages = strict.derivations "mkShell" "packages" checked.packages;
      shellHook = checked.shellHook or "";
    };
}

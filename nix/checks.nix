# The flake's checks. Each runs a script that also runs without Nix (checks/, pytest), so
# `nix flake check` and `.ci/run` prove the same things.
{ pkgs, src, st2 }:
let
  inherit (pkgs) lib;
  dependencies = import ./python-dependencies.nix {
    inherit src;
    pythonPackages = pkgs.python3Packages;
  };
  testPython = pkgs.python3.withPackages (_: dependencies.runtime ++ dependencies.test);
  hasExtensions =
    builtins.pathExists (src + "/hooks/pi-channel.ts") || builtins.pathExists (src + "/hooks/omp-channel.ts");

  # A writable copy of the source with HOME and the XDG dirs in the build directory.
  inSource =
    name: nativeBuildInputs: script:
    pkgs.runCommand "st2-check-${name}" { inherit nativeBuildInputs; } ''
      cp -r ${src} source
      chmod -R u+w source
      cd source
      export HOME=$PWD/.home XDG_STATE_HOME=$PWD/.home/state XDG_CONFIG_HOME=$PWD/.home/config
      mkdir -p $HOME
      ${script}
      touch $out
    '';
in
{
  # The unit and process tiers (real CLI, real tmux, signals, inotify). Not the lab tier (it
  # needs the harness binaries), not the opt-in systemd tier (a private user manager; its guard
  # proofs do run), not tests/nix (nix cannot run inside a build), and not the fresh-clone test
  # of scripts/dev (it installs from PyPI and apt, which a sandboxed build cannot reach).
  pytest = inSource "pytest" [ testPython pkgs.tmux pkgs.git pkgs.systemd st2 ] ''
    python -m pytest -q -p no:cacheprovider -n $NIX_BUILD_CORES -m "not lab and not systemd" \
      --ignore=tests/lab --ignore=tests/nix \
      --deselect tests/test_readme.py::test_the_readme_commands_work_from_a_fresh_clone
  '';

  units-verify = inSource "units-verify" [ pkgs.python3 pkgs.systemd ] ''
    python3 checks/units-verify
  '';

  # Every test that reads a verbatim harness capture (captures/**): the producers' fixtures.
  fixtures = inSource "fixtures" [ testPython pkgs.git ] ''
    python3 checks/fixture-tests
  '';
}
// lib.optionalAttrs hasExtensions {
  # Installs the pinned TypeScript toolchain and harness builds from npm when they are missing.
  extension-smoke = inSource "extension-smoke" [ pkgs.python3 pkgs.nodejs ] ''
    python3 checks/extension-smoke
  '';
}

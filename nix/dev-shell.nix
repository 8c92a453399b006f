# `nix develop`: the interpreter with every runtime and test dependency, tmux, git and the
# systemd tools the checks use; ST_HOOKS points at the working tree's hooks/.
{ pkgs, src }:
let
  dependencies = import ./python-dependencies.nix {
    inherit src;
    pythonPackages = pkgs.python3Packages;
  };
in
pkgs.mkShell {
  packages = [
    (pkgs.python3.withPackages (_: dependencies.runtime ++ dependencies.test))
    pkgs.tmux
    pkgs.git
    pkgs.systemd
  ];
  shellHook = ''
    export ST_HOOKS=$PWD/hooks
  '';
}

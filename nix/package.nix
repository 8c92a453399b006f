# st2 as a Python application built from pyproject.toml, with tmux on its PATH (the PTY
# backend), systemd-run after the host's own (task scopes), the harness-side assets installed
# under share/st2/hooks and ST_HOOKS pointing at them unless the caller already set it.
{ pkgs, src }:
let
  inherit (pkgs) lib python3Packages;
  dependencies = import ./python-dependencies.nix {
    inherit src;
    pythonPackages = python3Packages;
  };
in
python3Packages.buildPythonApplication {
  pname = dependencies.project.name;
  version = dependencies.project.version;
  pyproject = true;
  inherit src;

  build-system = [ python3Packages.setuptools ];
  dependencies = dependencies.runtime;

  makeWrapperArgs = [
    "--prefix"
    "PATH"
    ":"
    (lib.makeBinPath [ pkgs.tmux ])
    "--suffix"
    "PATH"
    ":"
    (lib.makeBinPath [ pkgs.systemd ])
    "--set-default"
    "ST_HOOKS"
    "${placeholder "out"}/share/st2/hooks"
  ];

  # hooks/ holds the harness-side assets (status-line tee, pi/omp extensions); units/ the
  # templates `st2 service install` also finds inside the package.
  postInstall = ''
    mkdir -p $out/share/st2/hooks
    if [ -d hooks ]; then cp -r hooks/. $out/share/st2/hooks/; fi
    cp -r units $out/share/st2/units
  '';

  # The suites run as flake checks (checks.<system>.pytest), where tmux and git are present.
  doCheck = false;
  pythonImportsCheck = [ "st2" ];

  meta = {
    description = dependencies.project.description;
    mainProgram = "st2";
    platforms = lib.platforms.linux;
  };
}

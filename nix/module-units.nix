# What both modules install: the rendered units (nix/units.nix, the same templates and
# substitutions as `st2 service install`) and which target each enabled unit is wanted by.
# Templates (name@.service) are installed but never enabled: the operator instantiates them.
cfg:
let
  rendered = import ./units.nix {
    st2 = "${cfg.package}/bin/st2";
    inherit (cfg) catalog host memoryMax pollInterval;
  };
  isUsagePoll = name: builtins.match "st2-usage-poll\\..*" name != null;
in
{
  units = builtins.removeAttrs rendered (
    (if cfg.usagePoll then [ ] else builtins.filter isUsagePoll (builtins.attrNames rendered))
    ++ (if cfg.web then [ ] else [ "st2-web.service" ])
  );
  wantedBy = {
    "st2.service" = "default.target";
  }
  // (if cfg.usagePoll then { "st2-usage-poll.timer" = "timers.target"; } else { })
  // (if cfg.web then { "st2-web.service" = "default.target"; } else { });
}

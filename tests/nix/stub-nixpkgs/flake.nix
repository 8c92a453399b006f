# A stand-in for nixpkgs, for evaluating st2's flake offline (no nixpkgs is reachable here):
#   nix flake check --no-build --override-input nixpkgs path:tests/nix/stub-nixpkgs
# It provides exactly the attributes st2's flake and modules use, each checking the arguments it
# is given, and nothing else: a misspelt package, an unknown argument or a wrong type is an
# evaluation error here as it would be with the real nixpkgs. Its derivations evaluate but
# cannot build (their builder refuses), so it proves wiring, never a build.
{
  description = "stand-in nixpkgs for offline evaluation of st2's flake";

  outputs =
    { self }:
    let
      lib = import ./lib.nix;
    in
    {
      inherit lib;
      legacyPackages = builtins.listToAttrs (
        map
          (system: {
            name = system;
            value = import ./packages.nix { inherit lib system; };
          })
          [
            "x86_64-linux"
            "aarch64-linux"
          ]
      );
    };
}

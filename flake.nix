{
  description = "st2: supervise a fleet of coding-agent seats declared in a file catalog";

  inputs.nixpkgs.url = "github:NixOS/nixpkgs/nixos-25.05";

  outputs =
    { self, nixpkgs }:
    let
      # systemd user units and inotify: Linux only.
      systems = [
        "x86_64-linux"
        "aarch64-linux"
      ];
      forAllSystems =
        function:
        builtins.listToAttrs (
          map (system: {
            name = system;
            value = function nixpkgs.legacyPackages.${system};
          }) systems
        );
    in
    {
      packages = forAllSystems (pkgs: rec {
        st2 = import ./nix/package.nix {
          inherit pkgs;
          src = self;
        };
        default = st2;
      });

      # nix run .#st2 -- up
      apps = forAllSystems (pkgs: rec {
        st2 = {
          type = "app";
          program = "${self.packages.${pkgs.stdenv.hostPlatform.system}.st2}/bin/st2";
        };
        default = st2;
      });

      checks = forAllSystems (
        pkgs:
        import ./nix/checks.nix {
          inherit pkgs;
          src = self;
          st2 = self.packages.${pkgs.stdenv.hostPlatform.system}.st2;
        }
      );

      devShells = forAllSystems (pkgs: {
        default = import ./nix/dev-shell.nix {
          inherit pkgs;
          src = self;
        };
      });

      nixosModules = rec {
        st2 = import ./nix/nixos-module.nix { inherit self; };
        default = st2;
      };

      homeManagerModules = rec {
        st2 = import ./nix/home-manager-module.nix { inherit self; };
        default = st2;
      };
    };
}

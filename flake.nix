# Placeholder until the [nix] issue: it will build rpt and rebuild archived generations
# (`nix build .#<recipe>-vN`) from their own sources, offline, bit for bit.
{
  description = "rpt, a static recompilation framework";
  outputs = { self }: { };
}

let v = import ../pure/versions.nix; in
{
  toInt = {
    plain = { expr = v.toInt "13"; expected = 13; };
    leadingZeros = { expr = v.toInt "007"; expected = 7; };
    zero = { expr = v.toInt "0"; expected = 0; };
    notANumber = { expr = (builtins.tryEval (v.toInt "x1")).success; expected = false; };
  };
  parse = {
    three = { expr = v.parse "2025.3.2"; expected = [ 2025 3 2 ]; };
    trailingZeroKept = { expr = v.parse "12.0"; expected = [ 12 0 ]; };
    single = { expr = v.parse "13"; expected = [ 13 ]; };
  };
  normalize = {
    trailing = { expr = v.normalize [ 2 10 0 ]; expected = [ 2 10 ]; };
    allZero = { expr = v.normalize [ 0 0 ]; expected = [ 0 ]; };
    inner = { expr = v.normalize [ 1 0 1 ]; expected = [ 1 0 1 ]; };
  };
  show = {
    dropsZero = { expr = v.show "12.0"; expected = "12"; };
    keeps = { expr = v.show "2.10"; expected = "2.10"; };
  };
  compare = {
    numeric = { expr = v.compare "2.9" "2.10"; expected = -1; };
    equalPadded = { expr = v.compare "13" "13.0"; expected = 0; };
    greater = { expr = v.compare "13.2" "13.0"; expected = 1; };
    longer = { expr = v.compare "2.0.1" "2"; expected = 1; };
  };
  majorMinor = {
    pad = { expr = v.majorMinor "13"; expected = [ 13 0 ]; };
    cut = { expr = v.majorMinor "2025.3.2"; expected = [ 2025 3 ]; };
  };
  flatten = {
    torch = { expr = v.flatten "2.13"; expected = "213"; };
    xpu = { expr = v.flatten "2026.0.0"; expected = "20260"; };
    cuda = { expr = v.flatten "13"; expected = "130"; };
  };
}

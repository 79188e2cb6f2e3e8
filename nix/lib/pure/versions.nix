# Dotted versions ("2.13", "13.0", "2025.3.2") as kernel-builder reads them: lists of
# non-negative integers, equal when they differ only by trailing zeros ("12" == "12.0").
# Builtins only, so it evaluates without nixpkgs. Mirrors config.model.Version in Python.
rec {
  /* Parse one decimal component.

     Type: toInt :: string -> int

     Example:
       toInt "012"
       => 12
  */
  toInt =
    # a string of digits
    s:
    let m = builtins.match "0*([0-9]+)" s;
    in if m == null then throw "kernel-builder: version component '${s}' is not a number" else builtins.fromJSON (builtins.head m);

  /* Split a version string into its integer components (trailing zeros kept).

     Type: parse :: string -> [int]

     Example:
       parse "2025.3.2"
       => [ 2025 3 2 ]
  */
  parse =
    # a dotted version string such as "2.13"
    v:
    if !(builtins.isString v) then throw "kernel-builder: expected a version string such as \"2.13\", got ${builtins.typeOf v}"
    else map toInt (builtins.filter builtins.isString (builtins.split "\\." v));

  /* Drop trailing zero components (keeping at least one).

     Type: normalize :: [int] -> [int]

     Example:
       normalize [ 2 10 0 ]
       => [ 2 10 ]
  */
  normalize =
    # integer components
    parts:
    let n = builtins.length parts;
    in if n > 1 && builtins.elemAt parts (n - 1) == 0
      then normalize (builtins.genList (i: builtins.elemAt parts i) (n - 1))
      else parts;

  /* The normalised text of a version: what error messages show.

     Type: show :: string -> string

     Example:
       show "12.0"
       => "12"
  */
  show =
    # a dotted version string
    v: builtins.concatStringsSep "." (map toString (normalize (parse v)));

  /* Compare two versions, missing components counting as zero.

     Type: compare :: string -> string -> int   (-1, 0 or 1)

     Example:
       compare "2.9" "2.10"
       => -1
  */
  compare =
    # left version string
    a:
    # right version string
    b:
    let
      pa = parse a;
      pb = parse b;
      len = if builtins.length pa > builtins.length pb then builtins.length pa else builtins.length pb;
      at = l: i: if i < builtins.length l then builtins.elemAt l i else 0;
      go = i:
        if i >= len then 0
        else if at pa i < at pb i then -1
        else if at pa i > at pb i then 1
        else go (i + 1);
    in go 0;

  /* The first two components, padded with zeros.

     Type: majorMinor :: string -> [int]

     Example:
       majorMinor "13"
       => [ 13 0 ]
  */
  majorMinor =
    # a dotted version string
    v:
    let p = parse v ++ [ 0 0 ];
    in [ (builtins.elemAt p 0) (builtins.elemAt p 1) ];

  /* Major and minor digits run together, as variant names write them.

     Type: flatten :: string -> string

     Example:
       flatten "2025.3.2"
       => "20253"
  */
  flatten =
    # a dotted version string
    v: let mm = majorMinor v; in "${toString (builtins.elemAt mm 0)}${toString (builtins.elemAt mm 1)}";
}

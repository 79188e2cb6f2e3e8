# The backend table, python/kernel_builder/data/backends.json (the one kernel_builder.backends
# reads in Python): how a variant name writes each backend, and which sources are compiled.
# Adding a backend is a row there (docs/backends.md); nothing here names a backend.
let
  inherit (builtins) concatMap concatStringsSep elem filter foldl' fromJSON listToAttrs readFile;
  table = fromJSON (readFile ../../../python/kernel_builder/data/backends.json);
  unique = foldl' (acc: x: if elem x acc then acc else acc ++ [ x ]) [ ];
in
rec {
  /* The backend names, in table order.

     Type: names :: [ string ]
  */
  names = map (b: b.name) table.backends;

  /* The prefix of each versioned backend in a variant name (the version follows it).

     Type: prefixes :: { <backend> = string; }

     Example:
       prefixes.cuda
       => "cu"
  */
  prefixes = listToAttrs (map (b: { name = b.name; value = b.token; }) (filter (b: b.versioned) table.backends));

  /* The suffixes of compiled sources: commonSources, then every backend's own, in table
     order (driver/generate.py's list; per-object.nix makes a unit of each such source).

     Type: compiledSuffixes :: [ string ]
  */
  compiledSuffixes = unique (table.commonSources ++ concatMap (b: b.sources) table.backends);

  /* Edition 6's component languages and the backend of each: `cpp-<backend>` for every
     backend a component may target, and the table's `languages` rows (Rust).

     Type: languages :: { <language> = string; }

     Example:
       languages."rust-cutile"
       => "cuda"
  */
  languages = listToAttrs (map (b: { name = "cpp-${b.name}"; value = b.name; }) (filter (b: b.kernel) table.backends)
    ++ map (l: { inherit (l) name; value = l.backend; }) table.languages);

  /* Whether a relative path is a compiled source.

     Type: isCompiled :: string -> bool

     Example:
       isCompiled "csrc/relu.metal"
       => true
  */
  isCompiled = rel: builtins.match (".*\\.(" + concatStringsSep "|" compiledSuffixes + ")") rel != null;
}

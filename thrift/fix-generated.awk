# fix-generated.awk: repairs three bugs in the C GLib code of thrift-compiler
# 0.17 (types file only). Prints the number of finalizers patched to stderr.
#
# 1. Struct finalizers never chain up to GObject's finalize, so every struct
#    leaks the qdata GLib attaches while an object is being unreferenced.
#    Each "api_..._finalize (GObject *object)" function gets a call to its
#    parent's (ThriftStruct's, that is GObject's) finalize before its closing
#    brace.
# 2. Readers of sets insert an element only "if (set && elem)". Enum
#    elements are stored as plain integers, so the value 0 (PENDING,
#    ROLLING_FORWARD, ...) was silently dropped. Element pointers of other
#    sets are never NULL, so the test is dropped for all.
# 3. Readers of sets of integers allocate each element before reading it and
#    return on a read error without freeing it: a truncated message leaks.
free_elem != "" && /^ *return -1;$/ {
  sub(/return -1;/, "{ g_free (" free_elem "); return -1; }")
}
{ free_elem = "" }
/^ *if \(\(ret = thrift_protocol_read_i(32|64) \(protocol, &\*_elem[0-9]+, error\)\) < 0\)$/ {
  match($0, /_elem[0-9]+/)
  free_elem = substr($0, RSTART, RLENGTH)
}
/^api_[a-z0-9_]+_finalize \(GObject \*object\)$/ { in_fn = 1 }
in_fn && /^}$/ {
  print "  G_OBJECT_CLASS (g_type_class_peek (THRIFT_TYPE_STRUCT))->finalize (object);"
  in_fn = 0
  patched++
}
/^ *if \(this_object->[A-Za-z0-9_]+ && _elem[0-9]+\)$/ {
  sub(/ && _elem[0-9]+\)$/, ")")
}
{ print }
END { print patched > "/dev/stderr" }

# fix-processor.awk: repairs the service processors of thrift-compiler 0.17
# (one service file). Prints the number of lines patched to stderr.
#
# A processor that does not know a method hands it to its parent class's
# dispatch_call, found as g_type_class_peek_parent (X_GET_CLASS (self)). But
# X_GET_CLASS (self) is the class of the object, the most derived processor,
# not X's class: with three levels of services (StaggerScheduler extends
# AuroraSchedulerManager extends ReadOnlyScheduler) the middle level finds
# itself again and loops forever on an unknown method name, a denial of
# service from one short message. The parent is taken from X's own class.
/g_type_class_peek_parent \(API_[A-Z0-9_]+_PROCESSOR_GET_CLASS \(self\)\)/ {
  match($0, /API_[A-Z0-9_]+_PROCESSOR_GET_CLASS/)
  name = substr($0, RSTART + 4, RLENGTH - 4 - 10)
  sub(/API_[A-Z0-9_]+_PROCESSOR_GET_CLASS \(self\)/, "g_type_class_peek (API_TYPE_" name ")")
  patched++
}
{ print }
END { print patched + 0 > "/dev/stderr" }

/* thrift_json.c: a write-only ThriftProtocol that builds JSON: the struct
 * writes itself into it (field names included, since the generated code
 * passes them), and the result is the tree built: Stagger's readable form,
 * or the form of Thrift's TSimpleJSONProtocol (what Aurora's scheduler
 * sends an SLA coordinator). Pure; any thread. */
#include "config.h"

#include <string.h>

#include "common/enums.h"
#include "common/thrift_json.h"
#include "common/mem_transport.h"

typedef const gchar *(*Namer) (gint value);

typedef enum { FRAME_STRUCT, FRAME_LIST, FRAME_SET, FRAME_MAP } FrameKind;

typedef struct
{
  FrameKind kind;
  JsonNode *node;          /* (owned) the object or array being built */
  gchar *struct_name;      /* structs: the type's name */
  gchar *field;            /* structs: the field being written */
  Namer namer;             /* enum names for the field (structs) or elements */
  gboolean string_keys;    /* maps: a JSON object, else [[k, v], ...] */
  JsonNode *key;           /* maps: the key waiting for its value */
} Frame;

/* Which i32 fields are enums, by struct and field name. */
static const struct
{
  const gchar *type;
  const gchar *field;
  Namer namer;
} enum_fields[] = {
  { "Response", "responseCode", stg_response_code_name },
  { "JobConfiguration", "cronCollisionPolicy", stg_cron_policy_name },
  { "ScheduledTask", "status", stg_schedule_status_name },
  { "TaskEvent", "status", stg_schedule_status_name },
  { "TaskQuery", "statuses", stg_schedule_status_name },
  { "JobUpdateEvent", "status", stg_update_status_name },
  { "JobUpdateState", "status", stg_update_status_name },
  { "JobUpdateQuery", "updateStatuses", stg_update_status_name },
  { "JobInstanceUpdateEvent", "action", stg_update_action_name },
  { "PulseJobUpdateResult", "status", stg_pulse_status_name },
  { "UnreadyInstance", "status", stg_schedule_status_name },
};

#define STG_TYPE_JSON_RECORDER (stg_json_recorder_get_type ())
G_DECLARE_FINAL_TYPE (StgJsonRecorder, stg_json_recorder, STG, JSON_RECORDER, ThriftProtocol)

struct _StgJsonRecorder
{
  ThriftProtocol parent;
  GPtrArray *frames;       /* Frame*, innermost last */
  JsonNode *root;
  gboolean simple; /* TSimpleJSONProtocol's form */
};

G_DEFINE_TYPE (StgJsonRecorder, stg_json_recorder, THRIFT_TYPE_PROTOCOL)

static void
frame_free (Frame *f)
{
  if (f->node != NULL)
    json_node_unref (f->node);
  if (f->key != NULL)
    json_node_unref (f->key);
  g_free (f->struct_name);
  g_free (f->field);
  g_free (f);
}

static Frame *
top (StgJsonRecorder *self)
{
  return self->frames->len ? self->frames->pdata[self->frames->len - 1] : NULL;
}

/* Places @node (taken) where the innermost frame expects it. */
static void
emit (StgJsonRecorder *self, JsonNode *node)
{
  Frame *f = top (self);

  if (f == NULL)
    {
      if (self->root != NULL)
        json_node_unref (self->root);
      self->root = node;
      return;
    }
  switch (f->kind)
    {
    case FRAME_STRUCT:
      json_object_set_member (json_node_get_object (f->node), f->field ? f->field : "?", node);
      g_clear_pointer (&f->field, g_free);
      f->namer = NULL;
      break;
    case FRAME_LIST:
    case FRAME_SET:
      json_array_add_element (json_node_get_array (f->node), node);
      break;
    case FRAME_MAP:
      if (f->key == NULL)
        {
          f->key = node;
          break;
        }
      if (f->string_keys && json_node_get_value_type (f->key) == G_TYPE_STRING)
        json_object_set_member (json_node_get_object (f->node), json_node_get_string (f->key), node);
      else if (f->string_keys)
        {
          /* TSimpleJSONProtocol: any key as its JSON text, quoted. */
          g_autofree gchar *text = json_to_string (f->key, FALSE);
          json_object_set_member (json_node_get_object (f->node), text, node);
        }
      else
        {
          JsonArray *pair = json_array_new ();
          json_array_add_element (pair, g_steal_pointer (&f->key));
          json_array_add_element (pair, node);
          json_array_add_array_element (json_node_get_array (f->node), pair);
        }
      g_clear_pointer (&f->key, json_node_unref);
      break;
    }
}

static void
push (StgJsonRecorder *self, FrameKind kind, JsonNode *node)
{
  Frame *parent = top (self);
  Frame *f = g_new0 (Frame, 1);

  f->kind = kind;
  f->node = node;
  /* A list or set of enums takes its names from the field it fills. */
  if (kind != FRAME_STRUCT && parent != NULL)
    f->namer = parent->namer;
  g_ptr_array_add (self->frames, f);
}

static gint
compare_json (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const gchar *const *) a, *(const gchar *const *) b);
}

/* Sorts a set's elements by their JSON text, for stable output. */
static JsonNode *
sorted (JsonNode *array_node)
{
  JsonArray *a = json_node_get_array (array_node);
  g_autoptr (GPtrArray) texts = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GHashTable) by_text = g_hash_table_new (g_str_hash, g_str_equal);

  for (guint i = 0; i < json_array_get_length (a); i++)
    {
      JsonNode *e = json_array_get_element (a, i);
      gchar *text = json_to_string (e, FALSE);
      g_ptr_array_add (texts, text);
      g_hash_table_insert (by_text, text, e);
    }
  g_ptr_array_sort (texts, compare_json);
  JsonArray *out = json_array_new ();
  for (guint i = 0; i < texts->len; i++)
    json_array_add_element (out, json_node_copy (g_hash_table_lookup (by_text, texts->pdata[i])));
  JsonNode *node = json_node_alloc ();
  json_node_init_array (node, out);
  json_array_unref (out);
  return node;
}

static JsonNode *
pop (StgJsonRecorder *self)
{
  Frame *f = top (self);
  JsonNode *node = g_steal_pointer (&f->node);

  g_ptr_array_steal_index (self->frames, self->frames->len - 1);
  if (f->kind == FRAME_SET)
    {
      JsonNode *s = sorted (node);
      json_node_unref (node);
      node = s;
    }
  frame_free (f);
  return node;
}

/* ---- the protocol's writers ------------------------------------------------ */

static gint32
w_nothing (ThriftProtocol *p, GError **error)
{
  (void) p;
  (void) error;
  return 0;
}

static gint32
w_message_begin (ThriftProtocol *p, const gchar *name, const ThriftMessageType type,
                 const gint32 seqid, GError **error)
{
  (void) p;
  (void) name;
  (void) type;
  (void) seqid;
  (void) error;
  return 0;
}

static gint32
w_struct_begin (ThriftProtocol *p, const gchar *name, GError **error)
{
  StgJsonRecorder *self = STG_JSON_RECORDER (p);
  JsonNode *node = json_node_new (JSON_NODE_OBJECT);
  (void) error;

  json_node_take_object (node, json_object_new ());
  push (self, FRAME_STRUCT, node);
  top (self)->struct_name = g_strdup (name);
  return 0;
}

static gint32
w_container_end (ThriftProtocol *p, GError **error)
{
  StgJsonRecorder *self = STG_JSON_RECORDER (p);
  (void) error;

  emit (self, pop (self));
  return 0;
}

static gint32
w_field_begin (ThriftProtocol *p, const gchar *name, const ThriftType type, const gint16 id,
               GError **error)
{
  Frame *f = top (STG_JSON_RECORDER (p));
  (void) type;
  (void) id;
  (void) error;

  g_free (f->field);
  f->field = g_strdup (name);
  f->namer = NULL;
  for (guint i = 0; i < G_N_ELEMENTS (enum_fields); i++)
    if (g_strcmp0 (f->struct_name, enum_fields[i].type) == 0 && strcmp (name, enum_fields[i].field) == 0)
      f->namer = enum_fields[i].namer;
  return 0;
}

static JsonNode *
array_node (void)
{
  JsonNode *node = json_node_new (JSON_NODE_ARRAY);

  json_node_take_array (node, json_array_new ());
  return node;
}

static gint32
w_map_begin (ThriftProtocol *p, const ThriftType key_type, const ThriftType value_type,
             const guint32 size, GError **error)
{
  StgJsonRecorder *self = STG_JSON_RECORDER (p);
  gboolean object = key_type == T_STRING || self->simple;
  JsonNode *node;
  (void) value_type;
  (void) size;
  (void) error;

  if (object)
    {
      node = json_node_new (JSON_NODE_OBJECT);
      json_node_take_object (node, json_object_new ());
    }
  else
    node = array_node ();
  push (self, FRAME_MAP, node);
  top (self)->string_keys = object;
  return 0;
}

static gint32
w_list_begin (ThriftProtocol *p, const ThriftType type, const guint32 size, GError **error)
{
  (void) type;
  (void) size;
  (void) error;
  push (STG_JSON_RECORDER (p), FRAME_LIST, array_node ());
  return 0;
}

static gint32
w_set_begin (ThriftProtocol *p, const ThriftType type, const guint32 size, GError **error)
{
  (void) type;
  (void) size;
  (void) error;
  push (STG_JSON_RECORDER (p), FRAME_SET, array_node ());
  return 0;
}

static gint32
w_bool (ThriftProtocol *p, const gboolean value, GError **error)
{
  StgJsonRecorder *self = STG_JSON_RECORDER (p);
  JsonNode *node = json_node_new (JSON_NODE_VALUE);
  (void) error;

  if (self->simple)
    json_node_set_int (node, value ? 1 : 0); /* TSimpleJSONProtocol writes a byte */
  else
    json_node_set_boolean (node, value);
  emit (self, node);
  return 0;
}

static gint32
w_int (StgJsonRecorder *self, gint64 value)
{
  Frame *f = top (self);
  JsonNode *node = json_node_new (JSON_NODE_VALUE);

  if (!self->simple && f != NULL && f->namer != NULL && !(f->kind == FRAME_MAP))
    json_node_set_string (node, f->namer ((gint) value));
  else
    json_node_set_int (node, value);
  emit (self, node);
  return 0;
}

static gint32
w_byte (ThriftProtocol *p, const gint8 value, GError **error)
{
  (void) error;
  return w_int (STG_JSON_RECORDER (p), value);
}

static gint32
w_i16 (ThriftProtocol *p, const gint16 value, GError **error)
{
  (void) error;
  return w_int (STG_JSON_RECORDER (p), value);
}

static gint32
w_i32 (ThriftProtocol *p, const gint32 value, GError **error)
{
  (void) error;
  return w_int (STG_JSON_RECORDER (p), value);
}

static gint32
w_i64 (ThriftProtocol *p, const gint64 value, GError **error)
{
  (void) error;
  return w_int (STG_JSON_RECORDER (p), value);
}

static gint32
w_double (ThriftProtocol *p, const gdouble value, GError **error)
{
  JsonNode *node = json_node_new (JSON_NODE_VALUE);
  (void) error;

  json_node_set_double (node, value);
  emit (STG_JSON_RECORDER (p), node);
  return 0;
}

static gint32
w_string (ThriftProtocol *p, const gchar *str, GError **error)
{
  JsonNode *node = json_node_new (JSON_NODE_VALUE);
  (void) error;

  json_node_set_string (node, str ? str : "");
  emit (STG_JSON_RECORDER (p), node);
  return 0;
}

static gint32
w_binary (ThriftProtocol *p, const gpointer buf, const guint32 len, GError **error)
{
  /* TSimpleJSONProtocol: the bytes as text, when they are UTF-8. */
  if (STG_JSON_RECORDER (p)->simple && g_utf8_validate_len (buf, len, NULL))
    {
      g_autofree gchar *text = g_strndup (buf, len);
      return w_string (p, text, error);
    }
  g_autofree gchar *b64 = g_base64_encode (buf, len);

  return w_string (p, b64, error);
}

static void
stg_json_recorder_finalize (GObject *object)
{
  StgJsonRecorder *self = STG_JSON_RECORDER (object);

  g_ptr_array_unref (self->frames);
  if (self->root != NULL)
    json_node_unref (self->root);
  G_OBJECT_CLASS (stg_json_recorder_parent_class)->finalize (object);
}

static void
stg_json_recorder_class_init (StgJsonRecorderClass *klass)
{
  ThriftProtocolClass *pc = THRIFT_PROTOCOL_CLASS (klass);

  G_OBJECT_CLASS (klass)->finalize = stg_json_recorder_finalize;
  pc->write_message_begin = w_message_begin;
  pc->write_message_end = w_nothing;
  pc->write_struct_begin = w_struct_begin;
  pc->write_struct_end = w_container_end;
  pc->write_field_begin = w_field_begin;
  pc->write_field_end = w_nothing;
  pc->write_field_stop = w_nothing;
  pc->write_map_begin = w_map_begin;
  pc->write_map_end = w_container_end;
  pc->write_list_begin = w_list_begin;
  pc->write_list_end = w_container_end;
  pc->write_set_begin = w_set_begin;
  pc->write_set_end = w_container_end;
  pc->write_bool = w_bool;
  pc->write_byte = w_byte;
  pc->write_i16 = w_i16;
  pc->write_i32 = w_i32;
  pc->write_i64 = w_i64;
  pc->write_double = w_double;
  pc->write_string = w_string;
  pc->write_binary = w_binary;
}

static void
stg_json_recorder_init (StgJsonRecorder *self)
{
  self->frames = g_ptr_array_new_with_free_func ((GDestroyNotify) frame_free);
}

static JsonNode *
to_json (gpointer object, gboolean simple)
{
  g_autoptr (StgMemTransport) sink = stg_mem_transport_new (NULL, 0);
  g_autoptr (StgJsonRecorder) rec = g_object_new (STG_TYPE_JSON_RECORDER, "transport", sink, NULL);

  g_return_val_if_fail (THRIFT_IS_STRUCT (object), NULL);
  rec->simple = simple;
  if (thrift_struct_write (THRIFT_STRUCT (object), THRIFT_PROTOCOL (rec), NULL) < 0 ||
      rec->root == NULL)
    return json_node_new (JSON_NODE_NULL);
  return g_steal_pointer (&rec->root);
}

JsonNode *
stg_thrift_to_json (gpointer object)
{
  return to_json (object, FALSE);
}

JsonNode *
stg_thrift_to_simple_json (gpointer object)
{
  return to_json (object, TRUE);
}

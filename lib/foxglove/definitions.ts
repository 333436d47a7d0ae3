/**
 * The `ros2msg` schemas of the Foxglove channels and services: the types lib/bag/definitions.ts knows, plus
 * visualization_msgs (the safety envelope and the named positions as markers) and armgate's own messages and
 * services (`armgate_msgs`, defined here: they exist on no ROS graph, Foxglove decodes them from the schema it is
 * sent). Complete texts are assembled as rosbag2 does (lib/bag/definitions.ts), so Foxglove reads them as from
 * foxglove_bridge.
 */
import { parse } from '@foxglove/rosmsg';
import { MessageReader, MessageWriter } from '@foxglove/rosmsg2-serialization';
import { assembleDefinition, builtinMsgLookup, type MsgLookup } from '../bag/definitions.ts';

/** .msg texts beyond the bag writer's (ROS 2 Jazzy field lines; Marker's constants for its type and action). */
const MORE: Readonly<Record<string, string>> = {
  'std_msgs/msg/ColorRGBA': 'float32 r\nfloat32 g\nfloat32 b\nfloat32 a\n',
  'sensor_msgs/msg/CompressedImage': 'std_msgs/Header header\nstring format\nuint8[] data\n',
  'visualization_msgs/msg/UVCoordinate': 'float32 u\nfloat32 v\n',
  'visualization_msgs/msg/MeshFile': 'string filename\nuint8[] data\n',
  'visualization_msgs/msg/Marker':
    'int32 ARROW=0\nint32 CUBE=1\nint32 SPHERE=2\nint32 CYLINDER=3\nint32 LINE_STRIP=4\nint32 LINE_LIST=5\n' +
    'int32 CUBE_LIST=6\nint32 SPHERE_LIST=7\nint32 POINTS=8\nint32 TEXT_VIEW_FACING=9\nint32 MESH_RESOURCE=10\n' +
    'int32 TRIANGLE_LIST=11\nint32 ADD=0\nint32 MODIFY=0\nint32 DELETE=2\nint32 DELETEALL=3\n' +
    'std_msgs/Header header\nstring ns\nint32 id\nint32 type\nint32 action\ngeometry_msgs/Pose pose\n' +
    'geometry_msgs/Vector3 scale\nstd_msgs/ColorRGBA color\nbuiltin_interfaces/Duration lifetime\nbool frame_locked\n' +
    'geometry_msgs/Point[] points\nstd_msgs/ColorRGBA[] colors\nstring texture_resource\n' +
    'sensor_msgs/CompressedImage texture\nUVCoordinate[] uv_coordinates\nstring text\nstring mesh_resource\nMeshFile mesh_file\n' +
    'bool mesh_use_embedded_materials\n',
  'visualization_msgs/msg/MarkerArray': 'Marker[] markers\n',
  'armgate_msgs/msg/MotionStatus': 'std_msgs/Header header\nuint32 id\nstring kind\nstring state\nstring message\n',
  'armgate_msgs/msg/SequenceStatus':
    'std_msgs/Header header\nstring status\nint32 iteration\nint32 n_iterations\nstring point\nint32 returncode\nstring bag_path\n',
  'armgate_msgs/msg/Event': 'std_msgs/Header header\nstring type\nstring json\n',
  // Service requests and responses (the `request`/`response` schemas of a Foxglove service).
  'armgate_msgs/msg/Empty': '',
  'armgate_msgs/msg/Outcome': 'bool success\nstring message\nstring json\n',
  'armgate_msgs/msg/SetOverrideRequest': 'uint8 percent\n',
  'armgate_msgs/msg/MoveNamedRequest': 'string name\nfloat64 speed\nfloat64 accel_scale\nbool dry_run\n',
  'armgate_msgs/msg/MoveJointsRequest': 'float64[] joints\nfloat64 speed\nbool dry_run\n',
  'armgate_msgs/msg/SavePositionRequest': 'string name\nfloat64[] joints\n',
  'armgate_msgs/msg/JogStepRequest': 'uint8 joint\nstring axis\nfloat64 delta\nstring frame\n',
  'armgate_msgs/msg/MovePoseRequest':
    'float64 x\nfloat64 y\nfloat64 z\nfloat64 a\nfloat64 b\nfloat64 c\nfloat64 speed\nstring planner\n' +
    'string frame_id\nbool dry_run\n',
};

const lookup: MsgLookup = (pkg, name) => {
  const key = `${pkg}/msg/${name}`;
  return Object.hasOwn(MORE, key) ? MORE[key] : builtinMsgLookup(pkg, name);
};

/** A type's complete schema text and its CDR writer and reader. */
export interface MessageCodec {
  readonly type: string;
  readonly schema: string;
  readonly write: (message: unknown) => Uint8Array;
  readonly read: (data: ArrayBufferView) => unknown;
}

const codecs = new Map<string, MessageCodec>();

/** The codec of a message type (`pkg/msg/Type`); throws for a type neither table knows (a bug). */
export function codecOf(type: string): MessageCodec {
  const known = codecs.get(type);
  if (known) return known;
  const schema = assembleDefinition(type, lookup);
  if (!schema.ok) throw new Error(schema.error);
  const definitions = parse(schema.value, { ros2: true });
  const writer = new MessageWriter(definitions);
  const reader = new MessageReader(definitions);
  const codec: MessageCodec = {
    type,
    schema: schema.value,
    write: (message) => writer.writeMessage(message),
    read: (data) => reader.readMessage(data),
  };
  codecs.set(type, codec);
  return codec;
}

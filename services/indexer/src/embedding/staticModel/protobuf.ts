/**
 * A minimal protocol-buffers *encoder* (no decoder, no schema): just enough wire format to
 * write ONNX models without pulling in a protobuf library.
 *
 * Wire format recap: every field is `tag = (fieldNumber << 3) | wireType` as a varint, then
 * the payload. Wire type 0 = varint (ints, bools, enums), 2 = length-delimited (strings,
 * bytes, nested messages, packed repeated scalars). Nothing else is needed for ONNX.
 *
 * Large `bytes` payloads (e.g. a 137 MB embedding table) are kept *by reference*: a message
 * is a list of chunks, so a model can be streamed to disk without ever concatenating it.
 */

const WIRE_VARINT = 0;
const WIRE_LENGTH_DELIMITED = 2;

const UINT64_MAX = (1n << 64n) - 1n;

/** Varint bytes of an unsigned 64-bit value, or of a negative int64 as its two's complement. */
export function encodeVarint(value: number | bigint): number[] {
  let v: bigint;
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw new RangeError(`varint: ${value} is not a safe integer`);
    v = BigInt(value);
  } else {
    v = value;
  }
  if (v < 0n) {
    if (v < -(1n << 63n)) throw new RangeError(`varint: ${v} is below the int64 range`);
    v = BigInt.asUintN(64, v);
  } else if (v > UINT64_MAX) {
    throw new RangeError(`varint: ${v} exceeds 64 bits`);
  }
  const out: number[] = [];
  while (v >= 0x80n) {
    out.push(Number(v & 0x7fn) | 0x80);
    v >>= 7n;
  }
  out.push(Number(v));
  return out;
}

const utf8 = new TextEncoder();

/**
 * Builds one protobuf message. Small fields accumulate in a scratch array; big byte payloads
 * and nested messages are appended as separate chunks without copying their contents.
 */
export class ProtoWriter {
  private readonly chunks: Uint8Array[] = [];
  private scratch: number[] = [];
  private chunkBytes = 0;

  /** Total encoded length in bytes. */
  get length(): number {
    return this.chunkBytes + this.scratch.length;
  }

  private tag(field: number, wireType: number): void {
    if (!Number.isInteger(field) || field < 1 || field > 0x1fffffff) {
      throw new RangeError(`invalid protobuf field number ${field}`);
    }
    this.pushVarint(field * 8 + wireType);
  }

  private pushVarint(value: number | bigint): void {
    for (const b of encodeVarint(value)) this.scratch.push(b);
  }

  private flushScratch(): void {
    if (this.scratch.length > 0) {
      this.chunks.push(Uint8Array.from(this.scratch));
      this.chunkBytes += this.scratch.length;
      this.scratch = [];
    }
  }

  private appendChunk(bytes: Uint8Array): void {
    if (bytes.length === 0) return;
    if (bytes.length <= 64) {
      for (const b of bytes) this.scratch.push(b);
      return;
    }
    this.flushScratch();
    this.chunks.push(bytes);
    this.chunkBytes += bytes.length;
  }

  /** int32/int64/uint32/uint64/enum field (wire type 0). Negative values take 10 bytes, as in protobuf. */
  int(field: number, value: number | bigint): this {
    this.tag(field, WIRE_VARINT);
    this.pushVarint(value);
    return this;
  }

  bool(field: number, value: boolean): this {
    return this.int(field, value ? 1 : 0);
  }

  string(field: number, value: string): this {
    return this.bytes(field, utf8.encode(value));
  }

  /** Length-delimited bytes; the array is referenced, not copied (do not mutate it afterwards). */
  bytes(field: number, value: Uint8Array): this {
    this.tag(field, WIRE_LENGTH_DELIMITED);
    this.pushVarint(value.length);
    this.appendChunk(value);
    return this;
  }

  /** Embedded message. Its chunks are shared, so finish building `message` before calling this. */
  message(field: number, message: ProtoWriter): this {
    this.tag(field, WIRE_LENGTH_DELIMITED);
    this.pushVarint(message.length);
    for (const chunk of message.toChunks()) this.appendChunk(chunk);
    return this;
  }

  /** Packed repeated varint field (proto3 default for repeated scalars). */
  packedInts(field: number, values: readonly (number | bigint)[]): this {
    const body: number[] = [];
    for (const v of values) for (const b of encodeVarint(v)) body.push(b);
    return this.bytes(field, Uint8Array.from(body));
  }

  /** The encoded message as a list of chunks (concatenate them, or write them in order). */
  toChunks(): readonly Uint8Array[] {
    this.flushScratch();
    return this.chunks;
  }

  /** The encoded message as one contiguous array (copies; meant for small messages). */
  finish(): Uint8Array {
    const chunks = this.toChunks();
    const out = new Uint8Array(this.chunkBytes);
    let offset = 0;
    for (const chunk of chunks) {
      out.set(chunk, offset);
      offset += chunk.length;
    }
    return out;
  }
}

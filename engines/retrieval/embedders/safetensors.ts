// Reads and writes the safetensors format: an 8-byte little-endian header length, a JSON header
// `{name: {dtype, shape, data_offsets: [begin, end]}}` (offsets relative to the data section),
// then the raw little-endian tensor bytes. Float tensors (F32, F16, BF16) are read as float32.
import { readFileSync } from 'node:fs';

export interface Tensor {
  shape: number[];
  data: Float32Array;
}

function f16ToF32(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const frac = h & 0x3ff;
  if (exp === 0) return sign * 2 ** -14 * (frac / 1024);
  if (exp === 31) return frac ? NaN : sign * Infinity;
  return sign * 2 ** (exp - 15) * (1 + frac / 1024);
}

export function parseSafetensors(buf: Buffer, source = 'safetensors'): Map<string, Tensor> {
  if (buf.length < 8) throw new Error(`${source}: too short to be a safetensors file`);
  const headerLen = Number(buf.readBigUInt64LE(0));
  if (headerLen <= 0 || 8 + headerLen > buf.length) throw new Error(`${source}: bad header length ${headerLen}`);
  let header: Record<string, { dtype: string; shape: number[]; data_offsets: [number, number] }>;
  try {
    header = JSON.parse(buf.subarray(8, 8 + headerLen).toString('utf8'));
  } catch (e) {
    throw new Error(`${source}: header is not JSON (${(e as Error).message})`);
  }
  const base = 8 + headerLen;
  const out = new Map<string, Tensor>();
  for (const [name, info] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    const [begin, end] = info.data_offsets;
    const bytes = buf.subarray(base + begin, base + end);
    if (base + end > buf.length) throw new Error(`${source}: tensor ${name} runs past the end of the file`);
    const count = info.shape.reduce((a, b) => a * b, 1);
    let data: Float32Array;
    switch (info.dtype) {
      case 'F32':
        if (bytes.length !== count * 4) throw new Error(`${source}: tensor ${name} has ${bytes.length} bytes for ${count} floats`);
        // Copy: the data section need not be 4-byte aligned within the file buffer.
        data = new Float32Array(count);
        new Uint8Array(data.buffer).set(bytes);
        break;
      case 'F16':
        data = Float32Array.from({ length: count }, (_, i) => f16ToF32(bytes.readUInt16LE(i * 2)));
        break;
      case 'BF16':
        data = new Float32Array(count);
        {
          const u32 = new Uint32Array(data.buffer);
          for (let i = 0; i < count; i++) u32[i] = bytes.readUInt16LE(i * 2) << 16;
        }
        break;
      default:
        continue; // integer tensors (e.g. position_ids) are not weights
    }
    out.set(name, { shape: info.shape, data });
  }
  return out;
}

export function readSafetensors(path: string): Map<string, Tensor> {
  return parseSafetensors(readFileSync(path), path);
}

/** Writes float32 tensors (tests build tiny models with it). */
export function encodeSafetensors(tensors: Record<string, Tensor>): Buffer {
  const header: Record<string, unknown> = {};
  let offset = 0;
  for (const [name, t] of Object.entries(tensors)) {
    header[name] = { dtype: 'F32', shape: t.shape, data_offsets: [offset, offset + t.data.length * 4] };
    offset += t.data.length * 4;
  }
  const json = Buffer.from(JSON.stringify(header), 'utf8');
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(json.length));
  const parts = [len, json, ...Object.values(tensors).map((t) => Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength))];
  return Buffer.concat(parts);
}

// The wire protocol of leanprover-community/repl: request encoding, reply framing and the
// reply schema. Pure; the process handling lives in repl-process.ts.
import { z } from 'zod';

/** A command-mode request. Without `env` the REPL starts a fresh environment (the only place
 * `import` is allowed); with `env` it runs on top of an environment from an earlier reply. */
export interface ReplCommand {
  cmd: string;
  env?: number;
}

const PosSchema = z.object({ line: z.number().int(), column: z.number().int() });

const MessageSchema = z.object({
  // Kept as a string: an unknown severity must not make the whole reply unreadable.
  severity: z.string(),
  pos: PosSchema,
  endPos: PosSchema.nullish(),
  data: z.string(),
});

const SorrySchema = z.object({
  pos: PosSchema,
  endPos: PosSchema.nullish(),
  goal: z.string(),
  proofState: z.number().int().optional(),
});

const CommandReplySchema = z.object({
  env: z.number().int(),
  messages: z.array(MessageSchema).optional(),
  sorries: z.array(SorrySchema).optional(),
});

/** What the REPL answers when it could not run the command at all (e.g. "Unknown environment."). */
const ErrorReplySchema = z.object({ message: z.string() });

export type ReplPos = z.infer<typeof PosSchema>;
export type ReplMessage = z.infer<typeof MessageSchema>;
export type ReplSorry = z.infer<typeof SorrySchema>;
export type ReplCommandReply = z.infer<typeof CommandReplySchema>;
export type ReplErrorReply = z.infer<typeof ErrorReplySchema>;
export type ReplReply = ReplCommandReply | ReplErrorReply;

export const UNKNOWN_ENVIRONMENT = 'Unknown environment.';

export function isErrorReply(reply: ReplReply): reply is ReplErrorReply {
  return !('env' in reply);
}

/** The REPL concatenates the lines of a request until a blank line, so the JSON must be on one
 * line (JSON.stringify escapes newlines inside strings) and be followed by exactly one blank
 * line: a second blank line would be read as an empty request, which the REPL cannot parse. */
export function encodeCommand(command: ReplCommand): string {
  const wire: ReplCommand = command.env === undefined ? { cmd: command.cmd } : { cmd: command.cmd, env: command.env };
  return `${JSON.stringify(wire)}\n\n`;
}

/** Validates one decoded reply; throws a ZodError-carrying Error when it is not a REPL reply. */
export function parseReply(value: unknown): ReplReply {
  const command = CommandReplySchema.safeParse(value);
  if (command.success) return command.data;
  const error = ErrorReplySchema.safeParse(value);
  if (error.success) return error.data;
  throw new Error(`Not a REPL reply: ${command.error.message}`);
}

/** A blank line: Lean pretty-prints replies over many lines but never emits an empty one
 * (newlines inside strings are escaped), so a blank line always ends a reply. */
const SEPARATOR = /\n[ \t\r]*\n/g;

/**
 * Splits the REPL's stdout into replies. Chunks may cut a reply (or a UTF-8 character: feed
 * decoded text) anywhere. A block that is not exactly one JSON object is handed to `onNoise`,
 * never read as a reply: the real REPL writes nothing else, so the caller treats it as
 * tampering (code run inside the REPL writing to its stdout).
 */
export class ReplyFramer {
  private buffer = '';

  constructor(private readonly onNoise: (text: string) => void = () => {}) {}

  /** Appends a chunk and returns the JSON values of every reply it completed. */
  push(chunk: string): unknown[] {
    // A separator not found before can only start in the old text's trailing whitespace, so
    // search from there: a large reply arriving in many chunks is not rescanned each time.
    let scanFrom = this.buffer.length;
    while (scanFrom > 0 && /\s/.test(this.buffer[scanFrom - 1] ?? '')) scanFrom--;
    this.buffer += chunk;
    const replies: unknown[] = [];
    SEPARATOR.lastIndex = scanFrom;
    let start = 0;
    let match: RegExpExecArray | null;
    while ((match = SEPARATOR.exec(this.buffer)) !== null) {
      const block = this.buffer.slice(start, match.index);
      start = match.index + match[0].length;
      const value = decodeBlock(block);
      if (value !== undefined) replies.push(value);
      else if (block.trim() !== '') this.onNoise(block);
    }
    this.buffer = this.buffer.slice(start);
    return replies;
  }

  /** Text received after the last complete reply: anything but whitespace here once a reply is
   * complete is output the REPL did not make. */
  pending(): string {
    return this.buffer;
  }
}

function decodeBlock(block: string): unknown {
  const text = block.trim();
  return text === '' ? undefined : tryJson(text);
}

function tryJson(text: string): unknown {
  if (!text.startsWith('{')) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

// The LLM engine's public surface, for the activity factory and entry points.
export { createLlmClient, LlmClient } from './client';
export type { ChatMessage, CompleteOptions, JsonReplyFormat, LlmRole, LlmSettings } from './client';
export { LLM_FAILURE, retryDelayFromHeaders } from './failures';
export { askParsed, askStructured, parseJsonReply, ReplyError } from './structured';
export { toStrictJsonSchema } from './strict-schema';
export { buildDecomposeMessages, DecomposeReply } from './decompose-prompt';
export { buildFormalizeMessages, extractLeanStatement, formatLeanMessage } from './formalize-prompt';
export { buildJudgeMessages, enforceVerdict, JudgeReply } from './judge-prompt';
export { decomposeStatement, formalizeStatement, judgeStatement } from './stages';

// Some chat templates (Gemma's, among others) have no system role and drop system messages
// without a word, and with them every instruction. Folding puts the system text at the head of
// the first user message instead.
import type { ChatMessage } from './messages';

export function foldSystemPrompt(messages: ChatMessage[]): ChatMessage[] {
  const system = messages.filter((m) => m.role === 'system').map((m) => m.content.trim());
  if (system.length === 0) return messages;
  const rest = messages.filter((m) => m.role !== 'system');
  const first = rest.findIndex((m) => m.role === 'user');
  const head = system.join('\n\n');
  if (first < 0) return [{ role: 'user', content: head }, ...rest];
  return rest.map((m, i) => (i === first ? { ...m, content: `${head}\n\n${m.content}` } : m));
}

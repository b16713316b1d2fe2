// Every workflow the worker registers. The worker bundles this file (and what it imports).
export { formalize, progressQuery } from './formalize';
export { buildIndex, indexBuildProgressQuery } from './build-index';
export { formalizeAgent } from './formalize-agent';
export { sweep, sweepProgressQuery, pauseSignal, resumeSignal, cancelSignal } from './sweep';
export { checkStatements, checkProgressQuery } from './check-statements';
export { evaluateStatement } from './evaluate-statement';
export { rejudge } from './rejudge';
export { llmBatcher, llmBatcherStateQuery, llmBatchCollectSignal, llmBatchWithdrawSignal, llmBatchCancelSignal } from './llm-batcher';

import { llmContract } from './contract';
import { ExtractiveProvider } from './extractive';

// Deterministic and offline: it ignores scripts and answers from the passages themselves.
llmContract('extractive', async () => ({ provider: new ExtractiveProvider(), dispose: async () => undefined }));

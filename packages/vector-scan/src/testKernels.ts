/** The addon's kernels for its tests: each suite that depends on one runs under every kernel this CPU has. */
import { afterAll, beforeAll, expect } from 'vitest';
import { useVectorScanKernel, vectorScanKernel } from './index';

type KernelName = 'avx2' | 'plain';

/** The kernel the addon chose for this CPU at load. */
export const CHOSEN_KERNEL = vectorScanKernel() as KernelName;

/** The chosen kernel, and the plain one when that is another: the plain loops run whole on a CPU with AVX2 too. */
export const KERNELS: readonly KernelName[] = CHOSEN_KERNEL === 'plain' ? ['plain'] : [CHOSEN_KERNEL, 'plain'];

/** In a describe block: its tests run with `kernel`, and the chosen one is back after them. */
export function withKernel(kernel: KernelName): void {
  beforeAll(() => {
    expect(useVectorScanKernel(kernel)).toBe(kernel);
  });
  afterAll(() => {
    useVectorScanKernel(CHOSEN_KERNEL);
  });
}

/**
 * Exit codes a Memex process ends with on purpose, read by whatever supervises it (`pnpm start`,
 * a container runtime, systemd). Its own module, free of dependencies, so a supervisor can import
 * it without the rest of the runtime.
 */

/**
 * The process refused its configuration (sysexits' EX_CONFIG): starting it again with the same
 * settings cannot help, so a supervisor should stop and say so rather than restart it.
 */
export const EXIT_CONFIG = 78;

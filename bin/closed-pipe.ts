// A reader that goes away (`driftline runs show ID | head`) closes the pipe: the command stops
// quietly, as other command-line tools do, instead of dying with an unhandled EPIPE.
export function exitQuietlyOnClosedPipe(): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EPIPE') process.exit(0);
      throw err;
    });
  }
}

// Entry point: load config, build the app, listen, and shut down gracefully.
import { serve } from './lib/process.ts';

void serve();

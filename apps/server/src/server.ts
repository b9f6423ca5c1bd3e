// Entry point: load config, build the app, listen, and shut down gracefully.
import { serve } from './process.ts';

void serve();

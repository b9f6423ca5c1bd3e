// The compose topology on Node 24, the Docker image's runtime (topology.suite.ts): its own file, so
// it runs beside the suite on this machine's node.
import { onImageRuntime } from '../helpers/runtimes.ts';
import { topologySuite } from './topology.suite.ts';

onImageRuntime('the compose topology', topologySuite);

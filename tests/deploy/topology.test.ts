// The compose topology on the node running the tests (topology.suite.ts).
import { thisRuntime } from '../helpers/runtimes.ts';
import { topologySuite } from './topology.suite.ts';

topologySuite(thisRuntime);

// Part 2 of the model conformance suite (model.conformance.suite.ts): the profiles are shared among
// 3 files so they run side by side.
import { conformanceSuite } from './model.conformance.suite.ts';

conformanceSuite(1);

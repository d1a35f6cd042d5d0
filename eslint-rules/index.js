/** Local ESLint plugin of this repository (rules in eslint-rules/, ESM). */
import noUnexplainedCast from './no-unexplained-cast.js';

export default {
  meta: { name: 'local' },
  rules: { 'no-unexplained-cast': noUnexplainedCast },
};

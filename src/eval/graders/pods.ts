import type { Grader } from '../grade/grade-types.js';
import { podDeadlineS, podSite } from '../grade/pod-site.js';
import { imageWithoutRepos } from './engine.js';

/**
 * `k8s`: a fresh pod of each instance's image. The session of grading pods is opened before the work (a cluster that
 * is not there fails the command before any agent runs) and closed after; the Kubernetes client is loaded only then.
 */
export const podsGrader: Grader = {
  check(o) {
    if (o.image) throw imageWithoutRepos();
  },
  async open(_o, at, work) {
    const { openGradePods } = await import('../../k8s/grade-pods.js');
    const pods = await openGradePods(at.k8s, at.notice);
    try {
      return await work({ kind: 'image', open: podSite(pods, podDeadlineS(at.timeoutS, at.k8s.pendingS)) });
    } finally {
      await pods.close();
    }
  },
};

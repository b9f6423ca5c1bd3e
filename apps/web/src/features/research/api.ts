// The research report call: GET /api/web-research/{id}/ (owner only; 404 for anyone else's).
import { ZResearch } from '@daybook/contracts';
import { apiRequest } from '../../lib/api.ts';

export const researchPath = (id: number) => `/api/web-research/${id}/`;

export const getResearch = (id: number, signal?: AbortSignal) => apiRequest(researchPath(id), ZResearch, { signal });

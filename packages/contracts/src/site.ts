import { z } from 'zod';

export const ZProfileLink = z.object({ label: z.string(), url: z.url() });
export type TProfileLink = z.infer<typeof ZProfileLink>;

/** Public facts about this installation, configured by whoever hosts it. */
export const ZSiteInfo = z.object({
  creator: z.object({
    name: z.string(),
    slug: z.string(),
    bio: z.string(),
    email: z.email().nullable(),
    links: z.array(ZProfileLink),
  }),
});
export type TSiteInfo = z.infer<typeof ZSiteInfo>;

-- 0008_mint_job_nft_origin (sqlite): written by `npm run db:generate` from the code's schema. Review and commit it;
-- never edit a migration that has been applied anywhere: add a new one. One statement per line, ending in ";".
-- Changes: index mintJob_nftOrigin_idx
create index "mintJob_nftOrigin_idx" on "mintJob" ("nftOrigin");

"""alight's curated examples (`alight samples curate`: packed rows with their loss masks, safetensors) as a dataset of
verl's SFT trainer (`data.custom_cls`): each row as verl's own multi-turn dataset gives one, but with alight's token ids
and masks as they are. verl would re-render `messages` with the chat template; the policy's own traces must keep the
ids it sampled, and foreign traces were rendered and masked by alight already (src/samples/conversation.ts)."""

import torch
from safetensors.torch import load_file


class AlightSftDataset(torch.utils.data.Dataset):
    def __init__(self, parquet_files, tokenizer, config, processor=None, max_samples=-1):
        files = parquet_files if isinstance(parquet_files, (list, tuple)) else [parquet_files]
        config = config or {}
        self.pad_mode = config.get("pad_mode", "no_padding")
        self.max_length = int(config.get("max_length", 1024))
        self.truncation = config.get("truncation", "error")
        self.pad_id = tokenizer.pad_token_id if tokenizer is not None and tokenizer.pad_token_id is not None else 0
        self.rows = [row for f in files for row in rows_of(str(f))]
        if max_samples is not None and max_samples > 0:
            self.rows = self.rows[:max_samples]

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        ids, mask = self.rows[i]
        if len(ids) > self.max_length:
            if self.truncation == "error":
                raise ValueError(f"row {i} has {len(ids)} tokens, more than data.max_length={self.max_length}")
            keep = slice(-self.max_length, None) if self.truncation == "left" else slice(0, self.max_length)
            ids, mask = ids[keep], mask[keep]
        positions = torch.arange(len(ids), dtype=torch.long)
        if self.pad_mode == "no_padding":
            return {"input_ids": ids, "position_ids": positions, "loss_mask": mask}
        pad = self.max_length - len(ids)
        return {
            "input_ids": torch.cat([ids, torch.full((pad,), self.pad_id, dtype=ids.dtype)]),
            "attention_mask": torch.cat([torch.ones(len(ids), dtype=torch.long), torch.zeros(pad, dtype=torch.long)]),
            "position_ids": torch.cat([positions, torch.zeros(pad, dtype=torch.long)]),
            "loss_mask": torch.cat([mask, torch.zeros(pad, dtype=mask.dtype)]),
        }


def rows_of(path):
    """The (input_ids, loss_mask) of each packed row of an alight batch or curated file."""
    t = load_file(path)
    offsets = t["row_offsets"].tolist()
    ids = t["input_ids"].long()
    mask = t["loss_mask"].long()
    return [(ids[a:b].clone(), mask[a:b].clone()) for a, b in zip(offsets, offsets[1:])]

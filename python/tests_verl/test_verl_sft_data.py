"""alight's curated rows as verl's SFT dataset (alight_worker/verl/sft_data.py), built the way verl's trainer builds
it (its create_sft_dataset with data.custom_cls)."""

import pytest
import torch
from omegaconf import OmegaConf
from safetensors.torch import save_file
from verl.trainer.sft_trainer import create_sft_dataset

from alight_worker.verl.sft_data import __file__ as dataset_file


@pytest.fixture
def curated(tmp_path):
    """Two rows packed as alight writes them: a prompt (mask 0) then sampled tokens (mask 1), the second multi-turn."""
    ids = torch.tensor([5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15], dtype=torch.int32)
    mask = torch.tensor([0, 0, 1, 1, 0, 0, 1, 0, 0, 1, 1], dtype=torch.uint8)
    path = tmp_path / "train.safetensors"
    save_file({"input_ids": ids, "loss_mask": mask, "row_offsets": torch.tensor([0, 4, 11], dtype=torch.int64)}, path)
    return str(path)


def dataset(path, **data):
    config = OmegaConf.create(
        {"custom_cls": {"path": dataset_file, "name": "AlightSftDataset"}, "max_length": 16, **data}
    )
    return create_sft_dataset([path], config, tokenizer=None, processor=None)


def test_each_row_is_verls_item_with_alights_ids_and_mask_as_they_are(curated):
    d = dataset(curated, pad_mode="no_padding")
    assert len(d) == 2
    assert d[0]["input_ids"].tolist() == [5, 6, 7, 8] and d[0]["loss_mask"].tolist() == [0, 0, 1, 1]
    assert d[1]["input_ids"].tolist() == [9, 10, 11, 12, 13, 14, 15]
    assert d[1]["loss_mask"].tolist() == [0, 0, 1, 0, 0, 1, 1]
    assert d[1]["position_ids"].tolist() == list(range(7))


def test_right_padding_masks_the_padding_out(curated):
    item = dataset(curated, pad_mode="right", max_length=8)[0]
    assert item["input_ids"].tolist() == [5, 6, 7, 8, 0, 0, 0, 0]
    assert item["attention_mask"].tolist() == [1, 1, 1, 1, 0, 0, 0, 0]
    assert item["loss_mask"].tolist() == [0, 0, 1, 1, 0, 0, 0, 0]


def test_a_row_longer_than_max_length_is_an_error_unless_a_truncation_is_asked(curated):
    with pytest.raises(ValueError, match="row 1 has 7 tokens, more than data.max_length=5"):
        dataset(curated, pad_mode="no_padding", max_length=5)[1]
    assert dataset(curated, pad_mode="no_padding", max_length=5, truncation="left")[1]["input_ids"].tolist() == [
        11,
        12,
        13,
        14,
        15,
    ]
